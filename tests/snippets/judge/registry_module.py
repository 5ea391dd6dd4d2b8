REGISTRY = {'old': 0}
DEFAULT = ['x']
TABLE = {'a': [1]}

def register(name):
    REGISTRY[name] = 1

def defaults(*more):
    DEFAULT.extend(more)
    return DEFAULT

def fresh():
    return list(DEFAULT)

def add(k):
    TABLE[k] = [2]

def fill(d):
    d['q'] = 1
