"""The parts of scripts/gpu/driver.py, by concern: core (context, steps, summaries), tests, bench, files, multi."""
