# id: fr15-numpy-datasource
# category: file-read
# effect: open the secret through numpy's DataSource
# touches_os: yes
# destructive: no
# fast: no
import numpy
n = numpy
ds = n.lib.npyio.DataSource(None)
print(ds.open("{SECRET}").read())
