"""Everything from the jail is untrusted: replies rebuilt field by field, text made safe, PNGs checked."""
