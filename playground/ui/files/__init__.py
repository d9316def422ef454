"""The served folders on disk: files followed as they grow (followed_file.py), the served folders and the keys
that name what lies under them (roots.py), run and sweep folders found under them (discovery.py), a checkpoint
folder's listing (checkpoint_list.py), and which runs have a live process here (run_processes.py). Nothing here
writes a file."""
