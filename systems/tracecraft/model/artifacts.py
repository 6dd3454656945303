"""Artifacts: ``artifact upload/download/list`` (RT-RTE-artifact-share, MEM-OBJ-artifact-file)."""

from __future__ import annotations

from systems.tracecraft.model.core import ClientCore, Gen
from systems.tracecraft.protocol import TracecraftError, normalize_step_id


class ArtifactsService(ClientCore):
    """Artifacts commands of a :class:`~systems.tracecraft.model.Client`."""

    def artifact_key(self, name: str, step: str | None = None, *, upload: bool = True) -> str:
        """``artifacts/<normalize(step)>/<file>`` or ``artifacts/shared/<file>``: on upload the file is the
        path's basename, on download NAME as given (``cli/artifacts.py:17-31, 34-51``)."""
        base = name.rsplit("/", 1)[-1] if upload else name
        if self.variant.has("artifact-namespace"):
            if step is None:
                return f"artifacts/shared/{base}"
            if "/" in step or not step.strip():
                raise TracecraftError(f"invalid step id {step!r}")
            return f"artifacts/steps/{step}/{base}"
        return f"artifacts/{normalize_step_id(step) if step else 'shared'}/{base}"

    def artifact_upload(self, name: str, body: bytes, step: str | None = None) -> Gen:
        """(RT-RTE-artifact-share, MEM-OBJ-artifact-file) One ``put_file`` of the local file *name*
        (holding *body*), keyed by its basename; silently overwrites."""
        key = self.artifact_key(name, step)
        yield from self._command()
        yield from self._rt()
        if not self.variant.has("artifacts-store-nothing"):
            self.b.put_bytes(key, body)
        self._print(f"Uploaded {name.rsplit('/', 1)[-1]} -> {key}")
        self._op("artifact_upload", key=key, size=len(body))
        return key

    def artifact_download(self, name: str, step: str | None = None) -> Gen:
        """(MEM-OBJ-artifact-file) ``exists`` then ``get_file`` of NAME as given; raises "Artifact not
        found: <key>". Returns the bytes (upstream writes them to ``-o`` or to NAME).

        Not modeled: the local output file.
        """
        key = self.artifact_key(name, step, upload=False)
        yield from self._command()
        yield from self._rt()
        if not self.b.exists(key):
            raise TracecraftError(f"Artifact not found: {key}")
        yield from self._rt()
        body = self.b.get_bytes(key) or b""
        self._print(f"Downloaded {key} -> {name}")
        self._op("artifact_download", key=key, size=len(body))
        return body

    def artifact_list(self, step: str | None = None) -> Gen:
        """(RT-RTE-artifact-share) Artifact keys (of one step, or all); "No artifacts found." when none."""
        yield from self._command()
        yield from self._rt()
        prefix = self.artifact_key("x", step)[:-1] if step else "artifacts/"
        keys = self.b.list_keys(prefix)
        for k in keys:
            self._print(k)
        if not keys:
            self._print("No artifacts found.")
        self._op("artifact_list", prefix=prefix, count=len(keys))
        return keys
