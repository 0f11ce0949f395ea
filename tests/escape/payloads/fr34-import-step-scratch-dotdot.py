# id: fr34-import-step-scratch-dotdot
# category: file-read
# effect: import_step of the $HOME STEP secret by /scratch/.. (a name that starts in the scratch directory)
# touches_os: yes
# destructive: no
# fast: no
print(import_step("/scratch/.." + "{SECRET_STEP}").bounding_box())
