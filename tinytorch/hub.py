"""``torch.hub``: pretrained weights by URL, and models from a repository's ``hubconf.py``.

The cache is ``get_dir()`` (``$TORCH_HOME/hub``, ``$TORCH_HOME`` defaulting to ``$XDG_CACHE_HOME/torch``, that
to ``~/.cache/torch``; ``set_dir`` overrides it): weights go to ``<hub>/checkpoints/<file name>`` and a file already
there is loaded with ``tinytorch.load`` without touching the network; GitHub repositories are unpacked into
``<hub>/<owner>_<name>_<ref>``. Downloads use urllib (so ``file://`` URLs work too), with a tqdm progress bar on
stderr, written to a ``.partial`` file and moved into place once complete (and, with a hash prefix, verified:
``check_hash`` takes it from the file name, ``name-<sha256 prefix>.ext``, as ``HASH_REGEX`` finds it).

Source: https://pytorch.org/docs/stable/hub.html
"""
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from tqdm import tqdm  # a declared dependency; torchvision imports it from here (torch.utils.model_zoo.tqdm)

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

MODULE_HUBCONF = "hubconf.py"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME,
                                                                               DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    """The hub cache directory: the one ``set_dir`` gave, else ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults to
    ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``). Warns when the old ``TORCH_HUB`` variable is set."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Use ``d`` (``~`` expanded) as the hub cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to the path ``dst`` (written to ``dst.<uuid>.partial`` and moved into place when complete).
    ``hash_prefix``: the SHA-256 of the content must start with it, else RuntimeError (``invalid hash value``) and
    nothing is left at ``dst``. ``progress``: a tqdm bar on stderr. urllib's errors (URLError, HTTPError) pass
    through."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp, "x+b")
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            lengths = u.info().get_all("Content-Length")
            size = int(lengths[0]) if lengths else None
            sha = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=size, disable=not progress, unit="B", unit_scale=True, unit_divisor=1024) as bar:
                while True:
                    chunk = u.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    if sha is not None:
                        sha.update(chunk)
                    bar.update(len(chunk))
        f.close()
        if sha is not None:
            digest = sha.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename):
    """A zip holding one file: the format before PyTorch 1.6, whose one member is the serialized object."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            info = zf.infolist()
        return len(info) == 1 and not info[0].is_dir()
    return False


def _safe_extract_zip(zf, dest):
    """Extract ``zf`` under ``dest``; ValueError (PyTorch's messages) for a member with an absolute path, a ``..``
    part, or a path that resolves outside ``dest`` (a zip-slip archive), before anything is written."""
    root = Path(dest).resolve(strict=False)
    for m in zf.infolist():
        name = os.path.normpath(m.filename)
        if name.startswith(("/", "\\")) or len(name) >= 2 and name[1] == ":" and name[0].isalpha():
            raise ValueError(f"Archive entry has absolute path: {m.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {m.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {m.filename}")
    zf.extractall(root)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The object serialized at ``url`` (``torch.hub.load_state_dict_from_url``), through the cache:
    ``<model_dir>/<file name>`` (``model_dir`` defaults to ``get_dir()/checkpoints``; the file name is the URL's
    last path part, or ``file_name``). A file already there is loaded without downloading. ``check_hash``: the
    download's SHA-256 must start with the hex digits after the last ``-`` of the file name
    (``resnet18-5c106cde.pth``), else RuntimeError and nothing is cached. A zip holding one file (the pre-1.6
    format) is extracted into ``model_dir`` first. ``map_location``/``weights_only``: as ``tinytorch.load``."""
    from .serialization import load as _load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            prefix = r.group(1) if r else None
        download_url_to_file(url, cached, prefix, progress=progress)
    if _is_legacy_zip_format(cached):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                      "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile "
                      "format.", FutureWarning, stacklevel=2)
        with zipfile.ZipFile(cached) as zf:
            members = zf.infolist()
            if len(members) != 1:
                raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
            _safe_extract_zip(zf, model_dir)
            cached = os.path.join(model_dir, members[0].filename)
    return _load(cached, map_location=map_location, weights_only=weights_only)


# ---- hubconf repositories ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(errno.ENOENT, "no hubconf.py in the repository", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(m, VAR_DEPENDENCY, None) if VAR_DEPENDENCY in dir(m) else None
    if deps is not None:
        missing = [d for d in deps if importlib.util.find_spec(d) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(m, model) if model in dir(m) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo_info(github):
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    owner, name = repo_info.split("/")
    if ref is None:
        # the default branch: main if the repository has one, else master (from the cache when offline)
        try:
            with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            for possible in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{owner}_{name}_{possible}"):
                    ref = possible
                    break
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the repo could not be found "
                                   f"in the cache ({get_dir()})") from e
    return owner, name, ref


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(path):
        Path(path).touch()
    with open(path) as f:
        trusted = tuple(line.strip() for line in f)
    legacy = next(os.walk(hub_dir))[1]  # a repository already in the cache was trusted when it was fetched
    owner_name = f"{owner}_{name}"
    is_trusted = owner_name in trusted or owner_name_branch in legacy or owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         "list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - PyTorch's exception type
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _validate_not_a_forked_repo(owner, name, ref):
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for prefix in (f"https://api.github.com/repos/{owner}/{name}/branches",
                   f"https://api.github.com/repos/{owner}/{name}/tags"):
        page = 0
        while True:
            page += 1
            with urlopen(Request(f"{prefix}?per_page=100&page={page}", headers=headers)) as r:
                response = json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))
            if not response:
                break
            for br in response:
                if br["name"] == ref or br["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit from a forked repo, "
                     "please call hub.load() with forked repo directly.")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The local directory of GitHub repository ``owner/name[:ref]``: the cached copy, or a fresh download of its
    zipball unpacked into the cache. Offline, a repository not in the cache raises RuntimeError (no ref given)
    or urllib's URLError (the download)."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    branch = ref.replace("/", "_")
    owner_name_branch = "_".join([owner, name, branch])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    cached = os.path.join(hub_dir, branch + ".zip")
    if os.path.exists(cached):
        os.remove(cached)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
    download_url_to_file(url, cached, progress=False)
    with zipfile.ZipFile(cached) as zf:
        extracted = os.path.join(hub_dir, zf.infolist()[0].filename)
        if os.path.exists(extracted):
            shutil.rmtree(extracted)
        _safe_extract_zip(zf, hub_dir)
    os.remove(cached)
    if os.path.exists(repo_dir):
        shutil.rmtree(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    """The public callables (entrypoints) of the ``hubconf.py`` of GitHub repository ``owner/name[:ref]``."""
    m = _hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose, skip_validation))
    return [f for f in dir(m) if callable(getattr(m, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of entrypoint ``model`` of the ``hubconf.py`` of GitHub repository ``owner/name[:ref]``."""
    m = _hubconf(_get_cache_or_reload(github, force_reload, trust_repo, True, skip_validation))
    return _load_entry_from_hubconf(m, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """``model(*args, **kwargs)``, ``model`` an entrypoint of the ``hubconf.py`` of a GitHub repository
    (``source="github"``: ``owner/name[:ref]``, fetched into the cache) or of a local directory
    (``source="local"``). ValueError for another source; RuntimeError for a missing entrypoint or a dependency
    named in the hubconf's ``dependencies`` that is not installed."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)
    with _add_to_sys_path(repo_or_dir):
        m = _import_module(MODULE_HUBCONF, os.path.join(repo_or_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(m, model)
        return entry(*args, **kwargs)

