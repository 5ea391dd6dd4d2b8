"""clonelib: toolz 1.0.0's itertoolz (BSD-3-Clause, Copyright (c) 2013 Matthew Rocklin; see
LICENSE.txt) and a module of copy-pasted functions, some with planted bugs, for audit tests."""
