"""A model folder's reference to a biLM folder (`ner.bilm.source.BiLMFolder`, e.g. an
ELMoForManyLangs model), as archive.json's ``bilm`` entry holds it (`ner.model.archive`)::

    {"state": "warm", "format": "efml",
     "folder": {"file": "bilm" | "source": PATH_OR_ZIP_URL, "sha256": FOLDER_DIGEST, "size": N,
                "archive_sha256": ZIP_SHA256 (a zip source only)}}

``sha256`` is the folder digest (`ner.bilm.folder.folder_digest`: one sha256 over the names and
digests of the files its loader reads), checked on every load. A small biLM is copied into the
model folder's ``bilm/``; a larger one is referred to by where it came from: the zip's URL (its
sha256 and size pin the download) or the folder's absolute path.
"""

import shutil
from pathlib import Path
from typing import Any

from ner.bilm.folder import folder_digest, is_zip, local_folder, model_files
from ner.bilm.source import BiLMFolder
from ner.common.archives import ArchiveError
from ner.common.downloads import DownloadRefused, fetch, is_url
from ner.common.verified import checked_once, sha256_file

FOLDER = "bilm"  # where a copied biLM folder lies inside the model folder


def folder_entry(bilm: BiLMFolder, target: Path, embed_max_bytes: int) -> dict[str, Any]:
    """The manifest's entry for `bilm`, its files copied into `target`/bilm/ when together no
    larger than `embed_max_bytes`."""
    folder, format = bilm.folder(), bilm.detected_format()
    files = model_files(folder, format)
    item: dict[str, Any] = {"sha256": bilm.digest or folder_digest(folder, format)}
    size = sum(path.stat().st_size for path in files)
    if size <= embed_max_bytes:
        (target / FOLDER).mkdir()
        for path in files:
            shutil.copyfile(path, target / FOLDER / path.name)
        origin = bilm.path if is_url(bilm.path) else "/".join(Path(bilm.path).parts[-2:])
        item.update(file=FOLDER, size=size, origin=origin)
    elif is_zip(bilm.path):
        archive = fetch(bilm.path, sha256=bilm.sha256)  # the copy the folder was unpacked from
        source = bilm.path if is_url(bilm.path) else str(Path(bilm.path).resolve())
        item.update(source=source, size=archive.stat().st_size)
        item["archive_sha256"] = bilm.sha256 or sha256_file(archive)
    else:
        item.update(source=str(folder.resolve()), size=size)
    return {"state": bilm.state, "format": format, "folder": item}


def resolve_folder(directory: Path, entry: dict[str, Any], allow_download: bool) -> BiLMFolder:
    """The biLM folder of a model folder's entry, local and checked against its digest; a zip
    URL is downloaded (once, no larger than the recorded size) only when `allow_download`."""
    item, format = entry["folder"], entry["format"]
    source = str(directory / item["file"]) if "file" in item else item["source"]
    try:
        folder = local_folder(
            source,
            sha256=item.get("archive_sha256"),
            max_bytes=item["size"],
            download=allow_download,
        )
        digest = item["sha256"]
        files = model_files(folder, format)
        intact = checked_once(files, digest, lambda: folder_digest(folder, format) == digest)
    except DownloadRefused:
        raise ArchiveError(download_refused(directory, "folder", source)) from None
    except (OSError, ValueError) as error:  # missing, too large, corrupt, not that format
        raise ArchiveError(f"the biLM folder of model {directory}: {error}") from None
    if not intact:
        raise ArchiveError(
            f"the biLM folder {folder} of model {directory} is corrupt or was changed: its files' "
            f"digest differs from the manifest's {item['sha256']}"
        )
    # A zip keeps its source (saving the tagger again records it, not the unpacked copy).
    path = source if is_zip(source) else str(folder)
    return BiLMFolder(path, format, entry["state"], item.get("archive_sha256"), item["sha256"])


def download_refused(directory: Path, name: str, source: str) -> str:
    """Why a biLM file or folder that a model folder names by URL was not downloaded."""
    return (
        f"the biLM {name} of model {directory} is to be downloaded from {source}. "
        "A model folder can name any address, so loading downloads only when allowed: "
        "if you trust where the folder comes from, load it with allow_download=True "
        "(ner-predict/ner-serve --allow-download), or point the manifest at a local copy"
    )
