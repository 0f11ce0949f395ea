# id: rm05-shape-that-never-answers
# category: resource
# effect: a Box whose wrapped property spins forever once armed, so the summary (as render and measure would) never gets an answer
# touches_os: no
# destructive: no
# fast: yes
class Spin(Box):
    armed = False

    @property
    def wrapped(self):
        while Spin.armed:
            pass
        return self._real

    @wrapped.setter
    def wrapped(self, value):
        self._real = value


spin = Spin(1, 1, 1)
Spin.armed = True
