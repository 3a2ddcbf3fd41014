"""What the grader reads from a built executable: the machine code of the lesson's kernels
(cuobjdump -sass) and the symbols it needs from outside (cuobjdump -elf for device code, nm for
host code)."""
import re
import shutil
import subprocess

from runs import InfrastructureError, run_limited

TOOL_SECONDS = 180
FUNCTION_HEADER = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")
# "        /*0bd0*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20], ..." with an
# optional predicate ("@P0", "@!UP1") before the mnemonic.
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]\s+)?(?P<mnemonic>[A-Z][A-Z0-9_.]*)")


class MissingTool(InfrastructureError):
    """A CUDA tool the grader needs is not on PATH. On the grading host that is the host's fault
    (an infrastructure error); in a hand-out the student can fix it (grade.py says how)."""

    def __init__(self, name):
        super().__init__(f"{name} is not on PATH: it comes with the CUDA toolkit; put the toolkit's "
                         "bin folder on PATH (e.g. export PATH=/usr/local/cuda/bin:$PATH)")
        self.name = name


def tool(name):
    path = shutil.which(name)
    if not path:
        raise MissingTool(name)
    return path


def run_full_output(arguments):
    """cuobjdump's whole output (it can be megabytes: the whole SASS of the executable)."""
    try:
        completed = subprocess.run([tool("cuobjdump"), *map(str, arguments)], capture_output=True,
                                   text=True, errors="replace", timeout=TOOL_SECONDS)
    except subprocess.TimeoutExpired:
        raise InfrastructureError(f"cuobjdump took more than {TOOL_SECONDS} s") from None
    if completed.returncode != 0:
        raise InfrastructureError(f"cuobjdump {' '.join(map(str, arguments))} failed:\n"
                                  + completed.stderr[-2000:])
    return completed.stdout


def kernel_mnemonics(executable, namespace):
    """{mnemonic: count} over the device functions whose (mangled) name holds `namespace`: the
    lesson's kernels, not the harness's."""
    return parse_mnemonics(run_full_output(["-sass", executable]), namespace)


def parse_mnemonics(sass, namespace):
    counts = {}
    inside = False
    for line in sass.split("\n"):
        header = FUNCTION_HEADER.match(line)
        if header:
            inside = namespace in header["name"]
            continue
        instruction = INSTRUCTION.match(line) if inside else None
        if instruction:
            counts[instruction["mnemonic"]] = counts.get(instruction["mnemonic"], 0) + 1
    return counts


def missing_from_signature(signature, mnemonics):
    """The signature's words that no instruction matches (a word matches a mnemonic equal to it
    or starting with it and a dot)."""
    return [word for word in signature
            if not any(mnemonic == word or mnemonic.startswith(word + ".") for mnemonic in mnemonics)]


def device_undefined_functions(executable):
    """Functions the executable's device code calls but does not define (vprintf, malloc, ...)."""
    names = set()
    in_symbols = False
    for line in run_full_output(["-elf", executable]).split("\n"):
        if line.startswith(".section"):
            in_symbols = line.strip() == ".section .symtab"
            continue
        fields = line.split()
        # index value size info other shndx name; undefined: section index 0; a function: type 2.
        if in_symbols and len(fields) == 7 and re.fullmatch(r"0x[0-9a-f]+|\d+", fields[0]):
            try:
                info, section = int(fields[3], 16), int(fields[5], 16)
            except ValueError:
                continue
            if section == 0 and info & 0xF == 2 and not fields[6].startswith("."):
                names.add(fields[6])
    return names


def host_undefined_symbols(executable):
    """The dynamic symbols the executable imports (nm -D --undefined-only); None without nm."""
    nm = shutil.which("nm")
    if not nm:
        return None
    run = run_limited([nm, "-D", "--undefined-only", executable], TOOL_SECONDS, None)
    if run.exit_code != 0 or run.output_truncated:
        raise InfrastructureError(f"nm -D {executable} failed:\n{run.last_lines()}")
    return {line.split()[-1] for line in run.output.split("\n") if line.strip()}
