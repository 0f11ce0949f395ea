"""The jail's processes: the zygote, each session's keeper/init/head/next/snapshots, and the op table."""
