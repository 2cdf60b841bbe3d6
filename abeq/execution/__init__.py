"""Running a review: the runner applies a document to a case (runners/, with the runner modes,
tools, agent and workspace), the checks run on both arms (checks/), the judge compares two runs,
the engine does both for every case with the cache, and preflight refuses what must not run."""
