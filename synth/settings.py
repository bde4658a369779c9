"""Environment-level settings (`SYNTH_*` variables): where data lives. Recipes never read these."""

from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from synth.bucket import parse_bucket_url
from synth.splits import SplitFractions


class Settings(BaseSettings):
    """Where synth keeps its catalog, dataset shards and caches.

    The data root defaults to `./synth-data` in the working directory, as MLflow keeps `./mlruns`:
    outputs land where you run, and `SYNTH_HOME` moves them.
    """

    model_config = SettingsConfigDict(env_prefix="SYNTH_", frozen=True, extra="ignore")

    home: Path = Field(
        default=Path("synth-data"),
        description="Data root: catalog, datasets, caches. A bucket URL (s3://bucket/prefix) puts the data root in "
        "object storage; `home` is then this machine's cache of it (`local_home`).",
    )
    bucket: str | None = Field(
        default=None, description="The data root's bucket URL, where SYNTH_HOME is one (set from it, not by hand)."
    )
    local_home: Path | None = Field(
        default=None,
        description="Where this machine keeps what it can rebuild of a bucket data root (SYNTH_LOCAL_HOME): the "
        "catalog index, its copy of published parts, caches; default ~/.cache/synth/s3/BUCKET/PREFIX.",
    )
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

    @model_validator(mode="before")
    @classmethod
    def _bucket_root(cls, data: Any) -> Any:
        """SYNTH_HOME=s3://bucket/prefix: the bucket is the data root, and `home` this machine's cache of it."""
        if not isinstance(data, dict) or data.get("home") is None:
            return data
        home = str(data["home"])
        if not home.startswith("s3:/"):
            return data
        url = "s3://" + home[len("s3:/") :].lstrip("/")  # a Path made of the URL keeps one slash
        parsed = parse_bucket_url(url)
        local = data.get("local_home") or Path.home() / ".cache" / "synth" / "s3" / parsed.bucket / parsed.prefix
        return {**data, "bucket": url, "home": local}

    @property
    def root(self) -> str:
        """The data root as another machine reaches it: the bucket URL, else this folder."""
        return self.bucket or str(self.home.absolute())

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
