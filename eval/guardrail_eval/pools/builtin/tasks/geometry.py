"""Built-in tasks of the `geometry` domain: points, rectangles, polygons and triangles in 2-D.

Points are ``(x, y)`` tuples and axis-aligned rectangles ``(x_min, y_min, x_max, y_max)`` tuples.
"""

TASKS: list[dict[str, object]] = [
    {
        "id": "geometry_01",
        "domain": "geometry",
        "query": (
            "Area of a simple polygon from its vertices in order (clockwise or "
            "counterclockwise) with the shoelace formula, always non-negative. Raises "
            "ValueError for fewer than three points."
        ),
        "entry_point": "polygon_area",
        "code": """\
def polygon_area(points):
    if len(points) < 3: raise ValueError("a polygon needs at least three points")
    twice_area = 0.0
    for i in range(len(points)):
        x1, y1 = points[i]
        x2, y2 = points[(i + 1) % len(points)]
        twice_area += x1 * y2 - x2 * y1
    return abs(twice_area) / 2
""",
        "tests": [
            "assert polygon_area([(0, 0), (4, 0), (4, 3), (0, 3)]) == 12.0",
            "assert polygon_area([(0, 0), (0, 3), (4, 3), (4, 0)]) == 12.0",
            "assert polygon_area([(0, 0), (4, 0), (0, 3)]) == 6.0",
            "assert polygon_area([(1, 1), (3, 1), (2, 4)]) == 3.0",
            "assert polygon_area([(0, 0), (2, 0), (2, 2), (1, 1), (0, 2)]) == 3.0",
            "assert polygon_area([(0, 0), (1, 1), (2, 2)]) == 0.0",
            "try:\n    polygon_area([(0, 0), (1, 1)])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "geometry_02",
        "domain": "geometry",
        "query": (
            "Check whether a point lies inside an axis-aligned rectangle given as (x_min, y_min, "
            "x_max, y_max); points on the border count as inside. Raises ValueError when the "
            "rectangle's minimum corner is not below and left of its maximum corner."
        ),
        "entry_point": "point_in_rectangle",
        "code": """\
def point_in_rectangle(point, rect):
    x_min, y_min, x_max, y_max = rect
    if x_min > x_max or y_min > y_max: raise ValueError("rectangle corners are out of order")
    x, y = point
    inside_x = x_min <= x <= x_max
    inside_y = y_min <= y <= y_max
    return inside_x and inside_y
""",
        "tests": [
            "assert point_in_rectangle((1, 1), (0, 0, 2, 2)) is True",
            "assert point_in_rectangle((3, 1), (0, 0, 2, 2)) is False",
            "assert point_in_rectangle((1, 3), (0, 0, 2, 2)) is False",
            "assert point_in_rectangle((-1, -1), (0, 0, 2, 2)) is False",
            "assert point_in_rectangle((2, 2), (0, 0, 2, 2)) is True",
            "assert point_in_rectangle((0, 1), (0, 0, 2, 2)) is True",
            "assert point_in_rectangle((5, 5), (5, 5, 5, 5)) is True",
            "try:\n    point_in_rectangle((1, 1), (2, 0, 0, 2))\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "geometry_03",
        "domain": "geometry",
        "query": (
            "Area of the intersection of two axis-aligned rectangles, each given as (x_min, "
            "y_min, x_max, y_max). Returns 0 when they are disjoint or only touch along an edge "
            "or corner."
        ),
        "entry_point": "rectangle_overlap_area",
        "code": """\
def rectangle_overlap_area(a, b):
    left = max(a[0], b[0])
    bottom = max(a[1], b[1])
    right = min(a[2], b[2])
    top = min(a[3], b[3])
    if right <= left or top <= bottom: return 0.0
    return (right - left) * (top - bottom)
""",
        "tests": [
            "assert rectangle_overlap_area((0, 0, 4, 4), (2, 2, 6, 6)) == 4",
            "assert rectangle_overlap_area((2, 2, 6, 6), (0, 0, 4, 4)) == 4",
            "assert rectangle_overlap_area((0, 0, 10, 10), (2, 3, 5, 7)) == 12",
            "assert rectangle_overlap_area((0, 0, 3, 1), (1, -1, 2, 5)) == 1",
            "assert rectangle_overlap_area((1, 3, 5, 6), (0, 0, 4, 4)) == 3",
            "assert rectangle_overlap_area((0, 0, 2, 2), (2, 0, 4, 2)) == 0",
            "assert rectangle_overlap_area((0, 0, 2, 2), (5, 5, 7, 7)) == 0",
            "assert rectangle_overlap_area((0, 0, 2, 2), (1, 5, 3, 7)) == 0",
        ],
        "setup": "",
    },
    {
        "id": "geometry_04",
        "domain": "geometry",
        "query": (
            "Classify a triangle by its three side lengths as 'equilateral', 'isosceles' or "
            "'scalene'. Raises ValueError when the sides cannot form a triangle, including "
            "zero or negative lengths and degenerate (flat) triangles."
        ),
        "entry_point": "triangle_type",
        "code": """\
def triangle_type(a, b, c):
    sides = sorted([a, b, c])
    if sides[0] + sides[1] <= sides[2]: raise ValueError("sides violate the triangle inequality")
    if a == b == c:
        return "equilateral"
    if a == b or b == c or a == c:
        return "isosceles"
    return "scalene"
""",
        "tests": [
            "assert triangle_type(3, 3, 3) == 'equilateral'",
            "assert triangle_type(3, 3, 5) == 'isosceles'",
            "assert triangle_type(5, 3, 3) == 'isosceles'",
            "assert triangle_type(3, 5, 3) == 'isosceles'",
            "assert triangle_type(3, 4, 5) == 'scalene'",
            "assert triangle_type(4, 2, 3) == 'scalene'",
            "try:\n    triangle_type(1, 2, 3)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    triangle_type(10, 1, 2)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "geometry_05",
        "domain": "geometry",
        "query": (
            "Total length of a path through a list of 2-D points, summing the straight segments "
            "between consecutive points; with closed=True the segment from the last point back "
            "to the first is added. Returns 0.0 for fewer than two points."
        ),
        "entry_point": "path_length",
        "code": """\
import math


def path_length(points, closed=False):
    if len(points) < 2: return 0.0
    total = 0.0
    for i in range(1, len(points)):
        total += math.dist(points[i - 1], points[i])
    if closed:
        total += math.dist(points[-1], points[0])
    return total
""",
        "tests": [
            "assert path_length([(0, 0), (3, 4)]) == 5.0",
            "assert path_length([(0, 0), (3, 4), (3, 0)]) == 9.0",
            "assert path_length([(0, 0), (3, 4), (3, 0)], closed=True) == 12.0",
            "assert path_length([(0, 0), (0, 2), (2, 2), (2, 0)], True) == 8.0",
            "assert abs(path_length([(0, 0), (1, 1)]) - math.sqrt(2)) < 1e-9",
            "assert path_length([(1, 1)], closed=True) == 0.0",
            "assert path_length([], closed=True) == 0.0",
            "assert path_length([]) == 0.0",
        ],
        "setup": "import math",
    },
    {
        "id": "geometry_06",
        "domain": "geometry",
        "query": (
            "Orientation of an ordered triple of 2-D points p, q, r from the sign of the cross "
            "product: 'counterclockwise' for a left turn, 'clockwise' for a right turn and "
            "'collinear' when the points lie on one line."
        ),
        "entry_point": "orientation",
        "code": """\
def orientation(p, q, r):
    cross = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    if abs(cross) < 1e-12: return "collinear"
    if cross > 0:
        return "counterclockwise"
    return "clockwise"
""",
        "tests": [
            "assert orientation((0, 0), (1, 0), (1, 1)) == 'counterclockwise'",
            "assert orientation((0, 0), (1, 1), (1, 0)) == 'clockwise'",
            "assert orientation((1, 1), (0, 0), (1, 0)) == 'counterclockwise'",
            "assert orientation((2, 3), (5, 3), (4, 1)) == 'clockwise'",
            "assert orientation((0, 0), (4, 0), (2, 0.001)) == 'counterclockwise'",
            "assert orientation((0, 0), (4, 0), (2, -0.001)) == 'clockwise'",
            "assert orientation((2, 1), (5, 3), (4, 3)) == 'counterclockwise'",
            "assert orientation((4, 1), (5, 3), (6, 2)) == 'clockwise'",
            "assert orientation((0, 0), (1, 1), (2, 2)) == 'collinear'",
            "assert orientation((0, 0), (0, 2), (0, 5)) == 'collinear'",
        ],
        "setup": "",
    },
    {
        "id": "geometry_07",
        "domain": "geometry",
        "query": (
            "Smallest Euclidean distance between any two points in a list of 2-D points, by "
            "checking every pair; duplicate points give 0.0. Raises ValueError for fewer than "
            "two points."
        ),
        "entry_point": "closest_pair_distance",
        "code": """\
import math


def closest_pair_distance(points):
    if len(points) < 2: raise ValueError("need at least two points")
    best = math.inf
    for i in range(len(points)):
        for j in range(i + 1, len(points)):
            best = min(best, math.dist(points[i], points[j]))
    return best
""",
        "tests": [
            "assert closest_pair_distance([(0, 0), (3, 4)]) == 5.0",
            "assert abs(closest_pair_distance([(0, 0), (10, 10), (1, 1)]) - math.sqrt(2)) < 1e-9",
            "assert closest_pair_distance([(0, 0), (5, 0), (9, 0), (10, 0)]) == 1.0",
            "assert closest_pair_distance([(0, 0), (0, 7), (0, 9)]) == 2.0",
            "assert abs(closest_pair_distance([(-2, 0), (2, 0), (0, 3)]) - math.sqrt(13)) < 1e-9",
            "assert closest_pair_distance([(1, 1), (1, 1), (4, 5)]) == 0.0",
            "try:\n    closest_pair_distance([(1, 2)])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "import math",
    },
]
