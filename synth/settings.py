"""Environment-level settings (`SYNTH_*` variables): where data lives. Recipes never read these."""

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from synth.splits import SplitFractions


class Settings(BaseSettings):
    """Where synth keeps its catalog, dataset shards and caches.

    The data root defaults to `./synth-data` in the working directory, as MLflow keeps `./mlruns`:
    outputs land where you run, and `SYNTH_HOME` moves them.
    """

    model_config = SettingsConfigDict(env_prefix="SYNTH_", frozen=True, extra="ignore")

    home: Path = Field(default=Path("synth-data"), description="Data root: catalog, datasets, caches.")
    catalog: Path | None = Field(default=None, description="Catalog file; default <home>/synth.duckdb.")
    lock_timeout_s: float = Field(default=30.0, ge=0, description="How long to wait for a busy catalog.")
    models_dir: Path | None = Field(default=None, description="Converted model folders; default <home>/models.")
    api_key: SecretStr | None = Field(
        default=None,
        description="Key for OpenAI-compatible endpoints (SYNTH_API_KEY); a model's api_key_env overrides it.",
    )
    validation_fraction: float = Field(
        default=0.05, ge=0.0, lt=1.0, description="Share of items held out as the validation split (by item id)."
    )
    test_fraction: float = Field(
        default=0.1, ge=0.0, lt=1.0, description="Share of items held out as the test split (by item id)."
    )

    def split_fractions(self, validation: float | None = None, test: float | None = None) -> SplitFractions:
        """The held-out fractions, a command's options over these settings (synth.splits)."""
        return SplitFractions(
            validation=self.validation_fraction if validation is None else validation,
            test=self.test_fraction if test is None else test,
        )

    @property
    def catalog_path(self) -> Path:
        return (self.catalog or self.home / "synth.duckdb").absolute()

    @property
    def datasets_dir(self) -> Path:
        return (self.home / "datasets").absolute()

    @property
    def cache_dir(self) -> Path:
        return (self.home / "cache").absolute()

    @property
    def models_path(self) -> Path:
        return (self.models_dir or self.home / "models").absolute()

    @property
    def locks_dir(self) -> Path:
        """Run and publish locks (files the OS unlocks when their holder dies)."""
        return (self.home / "locks").absolute()

    @property
    def kg_path(self) -> Path:
        """Imported knowledge graphs, one DuckDB file each."""
        return (self.home / "kg").absolute()

    @property
    def llm_cache_path(self) -> Path:
        return self.cache_dir / "llm.sqlite"
