"""`playground ui`: a live web page over run folders and sweep folders, read from their files alone.

Like the sweep layer it never imports the trainer: it reads what runs and sweeps leave on disk, follows the files
that grow (each byte read once), writes nothing into the folders, and acts only through the existing commands
(`sweep pause`/`resume`) or a run's SIGTERM. Its floors, lowest first (a module imports its own floor and those
below, never one above; a layout test checks):

    files/    the files and folders: files read as they grow, the served folders and their keys (an escape
              resolves to nothing), finding run and sweep folders, checkpoint folders, runs' live processes
    views/    what the pages show of them: a run (state, records, log, checkpoints), a sweep (spec, trials, ASHA's
              rungs, Pareto front, state), the opts of several runs side by side
    web/      the HTTP server (pages, plotly.js from the `plotly` package, JSON, files), access rules, the JSON
              of each page, and what the buttons do
    static/   the pages themselves (HTML, JavaScript, CSS; package data)
"""
