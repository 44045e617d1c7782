# Which GPUs the CUDA backend is built for (included before enable_language(CUDA)).
#
# - -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable) wins.
# - Otherwise, with a GPU visible at configure time (nvidia-smi lists one): `native`,
#   code for exactly the GPUs of this machine (one architecture: the shortest build).
# - Otherwise INFER_CUDA_DEFAULT_ARCHS: SASS for sm_80 (A100), sm_86 (RTX 30xx, A40),
#   sm_89 (RTX 40xx, L4, L40) and sm_90 (H100, H200), and compute_90 PTX, which newer GPUs
#   (Blackwell: sm_100, sm_120) JIT-compile at load; `infer --diagnose` warns then.
#   Each architecture adds a full nvcc pass over kernels/*.cu to the build.
# Set before enable_language(CUDA) because that fills an unset CMAKE_CUDA_ARCHITECTURES
# with nvcc's own default (sm_75 for CUDA 13), which an H200 would run only through PTX
# JIT. The value chosen here is remembered (INFER_CUDA_ARCHS_AUTO) so that a later
# configure can tell it from one the user gave.
set(INFER_CUDA_DEFAULT_ARCHS "80-real;86-real;89-real;90" CACHE STRING
    "CUDA architectures built when neither CMAKE_CUDA_ARCHITECTURES is given nor a GPU is visible at configure time")

if(DEFINED CMAKE_CUDA_ARCHITECTURES AND
   NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "${INFER_CUDA_ARCHS_AUTO}")
  set(infer_cuda_archs_why "given with -DCMAKE_CUDA_ARCHITECTURES")
elseif(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT "$ENV{CUDAARCHS}" STREQUAL "")
  set(infer_cuda_archs_why "given in CUDAARCHS")
else()
  find_program(INFER_NVIDIA_SMI nvidia-smi)
  set(caps "")
  if(INFER_NVIDIA_SMI)
    execute_process(COMMAND ${INFER_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    RESULT_VARIABLE rc OUTPUT_VARIABLE caps ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0 OR NOT caps MATCHES "^[0-9]")
      set(caps "")
    endif()
  endif()
  if(caps)
    string(REPLACE "\n" ", " caps "${caps}")
    set(auto native)
    set(infer_cuda_archs_why "native: the GPUs visible at configure time (compute capability ${caps})")
  else()
    set(auto "${INFER_CUDA_DEFAULT_ARCHS}")
    set(infer_cuda_archs_why "INFER_CUDA_DEFAULT_ARCHS: no GPU visible at configure time")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${auto}" CACHE STRING "CUDA architectures" FORCE)
  set(INFER_CUDA_ARCHS_AUTO "${auto}" CACHE INTERNAL "the CUDA architectures infer chose")
endif()

# After enable_language(CUDA): infer_cuda_archs_built, the entries actually compiled
# (native, all and all-major spelled out), ',' between them: what --diagnose reports.
macro(infer_cuda_archs_resolve)
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native")
    set(infer_cuda_archs_built "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  elseif(CMAKE_CUDA_ARCHITECTURES MATCHES "^all(-major)?$")
    if(CMAKE_CUDA_ARCHITECTURES STREQUAL "all")
      set(infer_cuda_archs_built ${CMAKE_CUDA_ARCHITECTURES_ALL})
    else()
      set(infer_cuda_archs_built ${CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR})
    endif()
    # CMake builds SASS for each and PTX for the last
    list(POP_BACK infer_cuda_archs_built infer_last)
    list(TRANSFORM infer_cuda_archs_built APPEND "-real")
    list(APPEND infer_cuda_archs_built ${infer_last})
  else()
    set(infer_cuda_archs_built "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
  string(REPLACE ";" "," infer_cuda_archs_built "${infer_cuda_archs_built}")
  message(STATUS "infer: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} "
                 "(${infer_cuda_archs_why}): ${infer_cuda_archs_built}")
endmacro()
