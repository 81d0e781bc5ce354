#!/usr/bin/python
# Fake kubernetes.core.helm_pull for pkg/bootstrap's tests (see module_utils/fakecluster.py).
from ansible_collections.kubernetes.core.plugins.module_utils.fakecluster import run

if __name__ == "__main__":
    run("helm_pull")
