"""The SNOMED CT side: SCTIDs, the GPS and RF2 readers, and the validator of SNOMED CT fields (its
modules, top to bottom: docs/architecture.md). It uses the kernel only."""

__all__ = ["concepts", "gps", "loader", "rf2", "sctid", "tables", "validate"]
