# id: re13-idle-warmup-loop
# category: resource
# effect: patch build123d's Shape.cut to spin forever and keep a shape, so the idle next's warm-up (a disc with holes, cut by each hole) spins outside any call
# touches_os: no
# destructive: no
# fast: no
# then: idle
import build123d


def spin(self, *args, **kwargs):
    while True:
        pass


build123d.Shape.cut = spin
kept = Box(1, 1, 1)
