cuda/build-gpu/primitives.o: cuda/primitives.cpp cuda/primitives.h \
 cuda/core.h cuda/geoacc_core.h
cuda/primitives.h:
cuda/core.h:
cuda/geoacc_core.h:
