"""One session seen from the launcher: the zygote client and the transactional fork chain it drives."""
