"""Uploading an export folder to the Hugging Face Hub (a model repository)."""

from __future__ import annotations

from pathlib import Path

from ..errors import CusetError


def check_repo_id(repo: str) -> None:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo)
    except HFValidationError as e:
        raise CusetError(f"--push-to-hub {repo!r} is not a valid repository id: {e}") from None


def hub_token() -> str:
    """HF_TOKEN from the environment, else the token stored by `hf auth login`."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise CusetError("--push-to-hub needs a Hugging Face token: set HF_TOKEN or run "
                         "`hf auth login`")
    return token


def _one_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def push(folder: Path, repo: str, *, private: bool, token: str) -> str:
    """Create the repository if needed and upload the folder in one commit; returns its URL."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        url = api.create_repo(repo, private=private, exist_ok=True, repo_type="model")
        api.upload_folder(repo_id=repo, folder_path=str(folder), repo_type="model",
                          commit_message="Upload model exported by `python -m cuset export`")
    except Exception as e:  # noqa: BLE001 - HTTP, auth and connection errors all end the upload
        raise CusetError(f"upload to the Hub repository {repo!r} failed ({_one_line(e)}); the "
                         f"export is kept in {str(folder)!r}") from None
    return str(url)
