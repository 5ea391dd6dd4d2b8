"""Axis-aligned rectangles."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle given by its lower-left corner, width and height."""

    x: float
    y: float
    width: float
    height: float

    def area(self) -> float:
        """Area of the rectangle.

        >>> Rect(0, 0, 2, 3).area()
        6
        """
        return self.width * self.height

    def contains(self, px: float, py: float) -> bool:
        """Tell whether the point (px, py) lies inside the rectangle or on its border."""
        return self.x <= px <= self.x + self.width and self.y <= py <= self.y + self.height

    def intersects(self, other: Rect) -> bool:
        """Tell whether two rectangles overlap (touching edges count as overlapping)."""
        return not (
            other.x > self.x + self.width
            or other.x + other.width < self.x
            or other.y > self.y + self.height
            or other.y + other.height < self.y
        )

    @staticmethod
    def from_corners(x1: float, y1: float, x2: float, y2: float) -> Rect:
        """The rectangle spanned by two opposite corners, in any order."""
        return Rect(min(x1, x2), min(y1, y2), abs(x2 - x1), abs(y2 - y1))

    class Builder:
        """Collects corners and builds the smallest rectangle holding them."""

        def __init__(self) -> None:
            self.points: list[tuple[float, float]] = []

        def add(self, px: float, py: float) -> None:
            """Add a point to the collection."""
            self.points.append((px, py))


def rect_area(width: float, height: float) -> float:
    """Area of a rectangle of the given width and height.

    >>> rect_area(3, 4)
    12
    """
    return width * height
