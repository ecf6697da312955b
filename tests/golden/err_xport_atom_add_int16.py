# ARGS: compile tests/run/kernels/comm_refusals.py --entry kern -D P=4 -D what=atom_add_int16 --target c --multinode --dump-after lower_comm
# Several nodes on the C target: the world's proxy adds to 32- and 64-bit
# words only, so T.atom_add on an int16 word of a peer is refused by pass
# lower_comm where it sends the access through the transport (the C
# printer did it before issue 5 part 0).  The kernel:
# tests/run/kernels/comm_refusals.py.
