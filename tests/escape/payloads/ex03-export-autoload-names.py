# id: ex03-export-autoload-names
# category: exit
# effect: a part the driver then asks export to write under names that tools run or load on their own (pytest, site, setuptools, make, direnv, desktops) and under dot components
# touches_os: no
# destructive: no
# fast: no
# then: export conftest.py tests/test_x.py x_test.py sitecustomize.py usercustomize.py __init__.py __main__.py setup.py noxfile.py x.pth Makefile .envrc x.desktop a/.hidden/x.step .x.step
part = Box(1, 2, 3)
