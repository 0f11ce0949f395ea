"""What crosses the host file system: safe paths, exports to the output directory, input files, the script."""
