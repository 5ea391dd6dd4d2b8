from .constants import FACTOR


class Box:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height

    def area(self) -> int:
        return self.width * self.height

    def scaled_area(self) -> int:
        return self.area() * FACTOR


def box_area(width: int, height: int) -> int:
    return Box(width, height).area()
