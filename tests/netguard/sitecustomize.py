"""Started with every Python process the tests launch (PYTHONPATH): install the network guard."""

import netguard

netguard.install()
