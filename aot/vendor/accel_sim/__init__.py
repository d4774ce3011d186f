"""accel_sim: a simulated accelerator with its own ISA, compiler and bare-metal runtime."""
