"""From validated opts to running ranks: the prepared run folder, the plan, spawning, one rank's life."""
