"""A project's own test runner in Django's shape (tests/runtests.py): test labels, --verbosity,
--parallel workers. Each worker runs one test module and sends back what happened, test by test,
as text (Django sends tracebacks pickled with tblib); the parent replays it into unittest's
TextTestRunner, which prints unittest's report: dots or `-v 2` lines, the FAIL/ERROR blocks,
`Ran N tests`, `FAILED (…)`."""

import argparse
import multiprocessing
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class Remote(unittest.TestResult):
    """What a worker keeps: (event, test id, formatted traceback)."""

    def __init__(self):
        super().__init__()
        self.events = []

    def addSuccess(self, test):
        self.events.append(("addSuccess", test.id(), None))

    def addFailure(self, test, err):
        self.events.append(("addFailure", test.id(), self._exc_info_to_string(err, test)))

    def addError(self, test, err):
        self.events.append(("addError", test.id(), self._exc_info_to_string(err, test)))

    def addSkip(self, test, reason):
        self.events.append(("addSkip", test.id(), reason))


def run_module(label):
    result = Remote()
    unittest.defaultTestLoader.loadTestsFromName(label).run(result)
    return result.events


class Replayed(unittest.TextTestResult):
    """unittest's own result, fed the workers' events: tracebacks arrive as text."""

    def _exc_info_to_string(self, err, test):
        return err if isinstance(err, str) else super()._exc_info_to_string(err, test)


class Replay:
    def __init__(self, labels, parallel):
        self.labels, self.parallel = labels, parallel

    def __call__(self, result):
        with multiprocessing.Pool(self.parallel) as pool:
            for events in pool.imap(run_module, self.labels):
                for event, test_id, detail in events:
                    test = next(iter(unittest.defaultTestLoader.loadTestsFromName(test_id)))
                    result.startTest(test)
                    getattr(result, event)(test, *([detail] if detail is not None else []))
                    result.stopTest(test)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("modules", nargs="*", metavar="module")
    parser.add_argument("-v", "--verbosity", default=1, type=int, choices=[0, 1, 2, 3])
    parser.add_argument("--parallel", default=2, type=int)
    options = parser.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(1, os.path.dirname(HERE))
    labels = options.modules or sorted(
        name[:-3] for name in os.listdir(HERE) if name.startswith("test") and name.endswith(".py")
    )
    print(f"Testing with up to {options.parallel} processes")
    runner = unittest.TextTestRunner(verbosity=options.verbosity, resultclass=Replayed)
    outcome = runner.run(Replay(labels, options.parallel))
    sys.exit(not outcome.wasSuccessful())


if __name__ == "__main__":
    main()
