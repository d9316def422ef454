"""Where a process sits in a run (topology, rank, device) and how ranks meet and talk."""
