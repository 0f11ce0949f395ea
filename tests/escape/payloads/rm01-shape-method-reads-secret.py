# id: rm01-shape-method-reads-secret
# category: file-read
# effect: a Box subclass whose faces()/solids() - called by the summary, render and measure - read the secret file and print it
# touches_os: yes
# destructive: no
# fast: no
import numpy


class Sneaky(Box):
    def faces(self, *a, **k):
        print(bytes(numpy.fromfile("{SECRET}", dtype=numpy.uint8)).decode("utf-8", "replace"))
        return super().faces(*a, **k)

    def solids(self, *a, **k):
        print(bytes(numpy.fromfile("{SECRET}", dtype=numpy.uint8)).decode("utf-8", "replace"))
        return super().solids(*a, **k)


sneaky = Sneaky(10, 10, 10)
