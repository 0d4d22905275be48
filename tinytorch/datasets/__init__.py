"""Data sets with verified files: MNIST."""
from .mnist import MNIST, DatasetFileError
