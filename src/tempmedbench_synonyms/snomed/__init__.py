"""The SNOMED CT side: SCTIDs, the GPS and RF2 readers, and the validator of SNOMED CT fields."""
