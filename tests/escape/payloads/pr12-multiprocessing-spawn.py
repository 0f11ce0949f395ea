# id: pr12-multiprocessing-spawn
# category: process
# effect: multiprocessing with the 'spawn' start method (exec of a new interpreter)
# touches_os: yes
# destructive: no
# fast: no
import multiprocessing as mp
ctx = mp.get_context("spawn")
p = ctx.Process(target=print, args=("hi",))
p.start()
p.join(3)
if p.exitcode == 0:
    print("ESCAPE-RESULT: escaped=multiprocessing-spawn")
