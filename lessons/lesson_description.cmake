# A lesson's description, as the build reads it (lessons/CMakeLists.txt): the number and slug from
# the name of its folder, NN_slug, and the rest from the folder's lesson.json, which the course's
# Python tools read too (profiles/lesson_description.py says what each field means). Both readers
# refuse a missing or malformed description with the same one-line message
# (tests/tools/test_lesson_descriptions.py).

# The kinds of workload (gemm::workloads::kind_<name>, common/workloads/kinds.hpp), as a
# lesson.json spells them in "operands".
set(GEMM_LESSON_OPERANDS bf16 e4m3_block_scaled)

# The description of the lesson in `folder` (an absolute path), as the initializer of a
# gemm::LessonDescription, into the variable `out`. A missing or malformed description stops with
# one line that names the file and says what is wrong. An edit of the file configures again.
function(read_lesson_description out folder)
  get_filename_component(name ${folder} NAME)
  get_filename_component(parent_folder ${folder} DIRECTORY)
  get_filename_component(parent_folder ${parent_folder} NAME)
  set(where "${parent_folder}/${name}/lesson.json")
  if(NOT name MATCHES "^([0-9][0-9])_([a-z0-9_]+)$")
    message(FATAL_ERROR "${name}: a lesson's folder is named NN_slug, such as 08_tma_mbarrier")
  endif()
  math(EXPR id "${CMAKE_MATCH_1}")
  set(slug ${CMAKE_MATCH_2})
  if(NOT EXISTS ${folder}/lesson.json)
    message(FATAL_ERROR "${where} is missing: every lesson describes itself there "
                        "(docs/conventions.md)")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${folder}/lesson.json)
  file(READ ${folder}/lesson.json json)
  string(JSON type ERROR_VARIABLE error TYPE "${json}")
  if(error)
    string(REGEX REPLACE "[ \n]+" " " error "${error}")
    message(FATAL_ERROR "${where}: not valid JSON (${error})")
  elseif(NOT type STREQUAL "OBJECT")
    message(FATAL_ERROR "${where}: not a JSON object")
  endif()
  set(fields parent title operands fused_epilogue)
  set(types NUMBER STRING STRING BOOLEAN)
  string(JOIN ", " field_names ${fields})
  string(JSON count LENGTH "${json}")
  foreach(index RANGE 1 ${count})
    math(EXPR member "${index} - 1")
    string(JSON field MEMBER "${json}" ${member})
    if(NOT field IN_LIST fields)
      message(FATAL_ERROR "${where}: unknown field '${field}' (the fields: ${field_names})")
    endif()
  endforeach()
  foreach(field expected IN ZIP_LISTS fields types)
    string(JSON found ERROR_VARIABLE error TYPE "${json}" ${field})
    if(error)
      message(FATAL_ERROR "${where}: no field '${field}' (the fields: ${field_names})")
    elseif(NOT found STREQUAL expected)
      string(TOLOWER "${expected}" expected)
      string(TOLOWER "${found}" found)
      message(FATAL_ERROR "${where}: '${field}' must be a ${expected}, not a ${found}")
    endif()
    string(JSON ${field} GET "${json}" ${field})
  endforeach()
  if(NOT parent MATCHES "^[0-9]+$" OR parent GREATER_EQUAL id)
    message(FATAL_ERROR "${where}: the parent must be an earlier lesson's number, or 0 for the "
                        "first lesson (got ${parent})")
  endif()
  string(FIND "${title}" "\"" quote)
  string(FIND "${title}" "\\" backslash)
  if(title STREQUAL "" OR title MATCHES "\n" OR NOT quote EQUAL -1 OR NOT backslash EQUAL -1)
    message(FATAL_ERROR "${where}: the title must be one line, without quotes or backslashes")
  endif()
  if(NOT operands IN_LIST GEMM_LESSON_OPERANDS)
    string(JOIN ", " operand_names ${GEMM_LESSON_OPERANDS})
    message(FATAL_ERROR "${where}: operands must be one of ${operand_names}, not '${operands}'")
  endif()
  if(fused_epilogue)
    set(fused_epilogue true)
  else()
    set(fused_epilogue false)
  endif()
  set(${out} "{.id = ${id},
       .parent = ${parent},
       .slug = \"${slug}\",
       .title = \"${title}\",
       .workload = &gemm::workloads::kind_${operands},
       .fused_epilogue = ${fused_epilogue}}" PARENT_SCOPE)
endfunction()
