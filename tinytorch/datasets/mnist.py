"""MNIST (LeCun, Cortes & Burges): the four original IDX gz files, verified by md5 (torchvision's values)."""
import gzip
import hashlib
import os
import urllib.request

import numpy as np

from .._ops.creation import from_numpy
from ..utils.data import Dataset

MIRRORS = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
RESOURCES = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}


class DatasetFileError(RuntimeError):
    """A data set file is missing or does not match its checksum."""


def md5sum(path, chunk=1 << 20):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def read_idx(path):
    """Parse a (gzipped) IDX file into an ndarray (uint8 data, big-endian header)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[:4], "big")
    ndim = magic & 0xFF
    if magic >> 8 != 0x08:
        raise DatasetFileError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise DatasetFileError(f"{path}: expected {int(np.prod(dims))} values, found {arr.size}")
    return arr.reshape(dims)


class MNIST(Dataset):
    """MNIST digits: ``root/`` (or ``root/MNIST/raw/``) holds the four original ``.gz`` files.

    Items are ``(image, label)``: image a float32 tensor (1, 28, 28) in [0, 1] (or ``transform(image)``
    of the uint8 (28, 28) tensor when ``transform`` is given), label an int.
    ``data`` (N, 28, 28) uint8 and ``targets`` (N,) int64 hold the whole split.

    Raises ``DatasetFileError`` naming the file when one is missing or its md5 differs;
    ``download=True`` fetches missing files from the standard mirrors and verifies them.
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, download=False, transform=None, target_transform=None):
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        folder = self._folder(root)
        prefix = "train" if train else "t10k"
        names = [f"{prefix}-images-idx3-ubyte.gz", f"{prefix}-labels-idx1-ubyte.gz"]
        if download:
            for n in names:
                if not os.path.exists(os.path.join(folder, n)):
                    self._download(folder, n)
        for n in names:
            self._verify(os.path.join(folder, n))
        images = read_idx(os.path.join(folder, names[0]))
        labels = read_idx(os.path.join(folder, names[1])).astype(np.int64)
        self.data = from_numpy(np.ascontiguousarray(images))
        self.targets = from_numpy(labels)
        self._images = (images.astype(np.float32) / 255.0)[:, None]  # (N, 1, 28, 28)

    @staticmethod
    def _folder(root):
        for cand in (os.path.join(root, "MNIST", "raw"), root):
            if os.path.exists(os.path.join(cand, "t10k-labels-idx1-ubyte.gz")):
                return cand
        return root

    @staticmethod
    def _verify(path):
        name = os.path.basename(path)
        if not os.path.exists(path):
            raise DatasetFileError(f"MNIST file {name} not found at {path}. Pass download=True or copy the original "
                                   "files there.")
        got = md5sum(path)
        if got != RESOURCES[name]:
            raise DatasetFileError(f"MNIST file {path} is corrupt: md5 {got}, expected {RESOURCES[name]}")

    @staticmethod
    def _download(folder, name):
        os.makedirs(folder, exist_ok=True)
        dest = os.path.join(folder, name)
        errors = []
        for m in MIRRORS:
            try:
                tmp = dest + ".part"
                urllib.request.urlretrieve(m + name, tmp)
                if md5sum(tmp) != RESOURCES[name]:
                    os.remove(tmp)
                    errors.append(f"{m}: checksum mismatch")
                    continue
                os.replace(tmp, dest)
                return
            except OSError as e:
                errors.append(f"{m}: {e}")
        raise DatasetFileError(f"could not download {name}: " + "; ".join(errors))

    def __len__(self):
        return len(self._images)

    def __getitem__(self, index):
        if self.transform is None and self.target_transform is None:
            return from_numpy(self._images[index]), int(self.targets._native()[index])
        img = self.data[index]
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitems__(self, indices):
        """A batch at once: one fancy-index instead of ``len(indices)`` calls (used by DataLoader)."""
        if self.transform is not None or self.target_transform is not None:
            return [self[i] for i in indices]
        idx = np.asarray(indices)
        return _Batch(from_numpy(self._images[idx]), from_numpy(self.targets._native()[idx]))


class _Batch(list):
    """A list of samples that already knows its stacked form (default_collate uses it directly)."""

    def __init__(self, images, labels):
        super().__init__()
        self.stacked = (images, labels)

    def __len__(self):
        return len(self.stacked[1])
