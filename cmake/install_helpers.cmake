# What a program linking the installed static libinfer.a needs, computed once from the
# libraries found at configure time:
#   <out_cmake>  the link interface of the exported infer::infer_static (install side):
#                imported targets (Threads::Threads, CUDA::*) that inferConfig.cmake
#                finds again, plain library names, or full paths;
#   <out_pc>     the same as linker flags, for Libs.private in infer.pc.
# A library found in a directory the compiler searches anyway is named (-lNAME), so
# the installed files do not pin this machine's paths; elsewhere its full path is kept.

function(_infer_lib_item path out_name out_flag)
  get_filename_component(dir "${path}" DIRECTORY)
  get_filename_component(file "${path}" NAME)
  if(file MATCHES "^lib(.+)\\.(so|a)(\\..*)?$")
    set(name "${CMAKE_MATCH_1}")
  else()
    set(${out_name} "${path}" PARENT_SCOPE)
    set(${out_flag} "${path}" PARENT_SCOPE)
    return()
  endif()
  if(dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    set(${out_name} "${name}" PARENT_SCOPE)
    set(${out_flag} "-l${name}" PARENT_SCOPE)
  else()
    set(${out_name} "${path}" PARENT_SCOPE)
    set(${out_flag} "-L${dir} -l${name}" PARENT_SCOPE)
  endif()
endfunction()

function(infer_install_link_libs out_cmake out_pc)
  set(cm "")
  set(pc "")
  _infer_lib_item("${PROTOBUF_C_LIBRARY}" n f)
  list(APPEND cm "${n}")
  list(APPEND pc "${f}")
  if(INFER_HAVE_CBLAS)
    _infer_lib_item("${OPENBLAS_LIBRARY}" n f)
    list(APPEND cm "${n}")
    list(APPEND pc "${f}")
  endif()
  if(INFER_CUDA)
    # cudart is linked statically; cuBLAS, cuBLASLt and cuDNN shared. nvcc's host code
    # needs the C++ runtime (guards, personality), which a C link does not bring.
    list(APPEND cm CUDA::cudart_static CUDA::cublas CUDA::cublasLt)
    list(APPEND pc "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lcublas -lcublasLt")
    _infer_lib_item("${CUDNN_LIBRARY}" n f)
    list(APPEND cm "${n}" stdc++)
    list(APPEND pc "${f}" "-l${CMAKE_DL_LIBS}" -lrt -lstdc++)
  endif()
  if(MATH_LIBRARY)
    list(APPEND cm m)
    list(APPEND pc -lm)
  endif()
  list(APPEND cm Threads::Threads)
  if(CMAKE_THREAD_LIBS_INIT)
    list(APPEND pc "${CMAKE_THREAD_LIBS_INIT}")
  else()  # glibc >= 2.34 has pthread in libc; -lpthread is still accepted there
    list(APPEND pc -lpthread)
  endif()
  list(JOIN pc " " pc)
  set(${out_cmake} "${cm}" PARENT_SCOPE)
  set(${out_pc} "${pc}" PARENT_SCOPE)
endfunction()
