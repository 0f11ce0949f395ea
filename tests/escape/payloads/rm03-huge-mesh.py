# id: rm03-huge-mesh
# category: resource
# effect: a compound of thousands of spheres, so that rendering it needs more triangles than the renderer's cap
# touches_os: no
# destructive: no
# fast: yes
spheres = Compound([Pos(i * 3, j * 3, 0) * Sphere(1) for i in range(40) for j in range(40)])
print(len(spheres.solids()))
