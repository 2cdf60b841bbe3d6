"""abeq: does a rewritten prompt, skill or instruction file still make the model do the same things?"""

__version__ = "0.1.0"
