"""The catalog every command opens: the DuckDB index (`synth.store.catalog_index`), rebuilt from the
version manifests when its file is damaged (`synth.store.reindex`), so a bad file costs a warning,
not the data.
"""

from synth.settings import Settings
from synth.store.catalog_index import CatalogIndex, DamagedCatalogError, parse_ref
from synth.store.reindex import recover_catalog

__all__ = ["Catalog", "parse_ref"]


class Catalog(CatalogIndex):
    """A connection to the catalog; use `Catalog.open(settings)` as a context manager."""

    @classmethod
    def _recover(cls, settings: Settings, error: DamagedCatalogError) -> None:
        recover_catalog(settings, str(error))
