cuda/build-gpu/status.o: cuda/status.cpp cuda/core.h cuda/geoacc_core.h
cuda/core.h:
cuda/geoacc_core.h:
