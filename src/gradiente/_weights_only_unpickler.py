"""A pickle reader that can only build new data: ``gradiente.load``'s answer to PyTorch's ``weights_only=True``.

Python's own ``Unpickler`` lets a file do more than name globals: ``BUILD`` applies ``__setstate__`` (or a
``setattr`` per key) to whatever is on the stack, ``APPEND``/``SETITEM`` call methods of it, and ``REDUCE``
calls it. A checkpoint that may name ``torch.float32`` could therefore rewrite ``float32`` for the rest of the
process. So, as PyTorch does, this is a small pickle machine of its own, with one rule: **every object the file
changes is one it built**. Concretely:

* ``GLOBAL`` resolves only names in the caller's table (functions that build arrays, a few classes, dtypes);
  everything else is refused before anything runs.
* ``REDUCE``/``NEWOBJ`` call only the table's constructors, which return new objects.
* The classes a program allowlisted (``serialization.safe_globals``) are the one extension, as in PyTorch: ``NEWOBJ``
  makes a bare instance of one (``cls.__new__``, no ``__init__``) and ``BUILD`` gives that new instance its state
  (its ``__setstate__``, or its ``__dict__`` updated); ``REDUCE`` may call an allowlisted function.
* With ``weights_only=False``, a second extension: the caller's ``resolve`` may answer a name outside the table
  with a class the program already has (``serialization.py`` answers only for ``nn.Module`` subclasses, found in
  modules already imported, never importing one), which is then treated as an allowlisted class, except that
  ``REDUCE`` may not call it: only a bare instance and its state, as for a whole model that pickle would load.
* ``APPEND``, ``SETITEM``, ``ADDITEMS`` and ``BUILD`` change only containers made during this load (their ids
  are kept, with the objects, in ``_fresh``), and ``BUILD`` only sets plain attributes of a new
  ``OrderedDict`` (a ``state_dict``'s ``_metadata``), as PyTorch's reader allows, or hands the state to the
  caller's builder for a type it names (``builders``: the NumPy arrays and dtypes of ``serialization.py``), again
  only for an object built during this load.
* No opcode that imports by text (``INST``, ``OBJ``), uses the copyreg registry (``EXT*``) or a persistent
  id other than a storage is accepted.

What the rules refuse raises ``pickle.UnpicklingError`` in PyTorch's words ("Weights only load failed. ...");
a damaged pickle raises an ordinary exception, which the caller reports as a damaged file. The machine is a loop,
not a recursion, so a deeply nested file cannot exhaust the stack.
"""
import pickle
import struct
from collections import OrderedDict

__all__ = ["WeightsUnpickler", "refused"]

_PREFIX = "Weights only load failed. "
_MEMO_LIMIT = 1 << 24


def refused(reason):
    """The error for a file the reader will not load (PyTorch's opening words, then what was refused)."""
    return pickle.UnpicklingError(_PREFIX + reason + " Nothing in the file was run and nothing that existed "
                                  "before the call was changed.")


class WeightsUnpickler:
    """Reads one pickle from ``data`` (bytes). ``globals_``: ``{(module, name): object}``, the only names the file
    may use; ``constructors``: those of them that ``REDUCE``/``NEWOBJ`` may call; ``persistent_load``: called
    with a ``BINPERSID`` id; ``unknown_global``: makes the error for a name not in the table; ``builders``:
    ``{type: build(instance, state)}``, what ``BUILD`` may do to a new object of that type; ``allowed``: the
    program's allowlist, ``{(module, name): class or function}``; ``resolve``: ``resolve(module, name)``, a class
    for a name in none of these that the file may still build as an allowlisted one, or None."""

    def __init__(self, data, globals_, constructors, persistent_load, unknown_global, builders=None, allowed=None,
                 resolve=None):
        self._data = memoryview(data)
        self._pos = 0
        allowed = allowed or {}
        self._globals = {**globals_, **allowed}
        self._constructors = {id(c): c for c in (*constructors, *allowed.values()) if callable(c)}
        self._classes = {id(c): c for c in allowed.values() if isinstance(c, type)}
        self._persistent_load = persistent_load
        self._unknown_global = unknown_global
        self._resolve = resolve
        self._builders = builders or {}
        self._fresh = {}            # id -> object, for everything built here (kept alive so ids stay unique)

    # --- reading the byte stream ---
    def _read(self, n):
        end = self._pos + n
        if n < 0 or end > len(self._data):
            raise EOFError("the pickle ends in the middle of an instruction")
        chunk = self._data[self._pos:end]
        self._pos = end
        return bytes(chunk)

    def _line(self):
        end = bytes(self._data[self._pos:self._pos + 512]).find(b"\n")
        if end < 0:
            raise EOFError("a GLOBAL name has no end")
        line = self._read(end + 1)[:-1]
        return line.decode("ascii")

    def _new(self, obj):
        self._fresh[id(obj)] = obj
        return obj

    def _target(self, obj, kinds, what):
        if type(obj) not in kinds or self._fresh.get(id(obj)) is not obj:
            raise refused(f"WeightsUnpickler error: Can only {what}, but got {type(obj)} (an object this file "
                          "did not build).")
        return obj

    def _call(self, func, args, opcode):
        if self._constructors.get(id(func)) is not func:
            raise refused(f"WeightsUnpickler error: Trying to call {opcode} for unrecognized function {func!r}.")
        if type(args) is not tuple:
            raise ValueError(f"{opcode}'s arguments are not a tuple")
        return self._new(func(*args))

    # --- the machine ---
    def load(self):
        stack, marks, memo = [], [], {}
        read, u = self._read, struct.unpack

        def pop_mark():
            nonlocal stack
            items, stack = stack, marks.pop()
            return items

        while True:
            op = read(1)
            if op == b".":                                                 # STOP
                if len(stack) != 1 or marks:
                    raise ValueError("the pickle leaves a malformed stack")
                return stack[0]
            if op == b"\x80":                                              # PROTO
                read(1)
            elif op == b"\x95":                                            # FRAME
                read(8)
            elif op == b"(":                                               # MARK
                marks.append(stack)
                stack = []
            elif op == b"N":
                stack.append(None)
            elif op == b"\x88":
                stack.append(True)
            elif op == b"\x89":
                stack.append(False)
            elif op == b"K":                                               # BININT1
                stack.append(read(1)[0])
            elif op == b"M":                                               # BININT2
                stack.append(u("<H", read(2))[0])
            elif op == b"J":                                               # BININT
                stack.append(u("<i", read(4))[0])
            elif op in (b"\x8a", b"\x8b"):                                 # LONG1, LONG4
                n = read(1)[0] if op == b"\x8a" else u("<i", read(4))[0]
                stack.append(int.from_bytes(read(n), "little", signed=True))
            elif op == b"G":                                               # BINFLOAT
                stack.append(u(">d", read(8))[0])
            elif op in (b"X", b"\x8c", b"\x8d"):                           # BINUNICODE, SHORT_, 8
                n = u("<I", read(4))[0] if op == b"X" else read(1)[0] if op == b"\x8c" else u("<Q", read(8))[0]
                stack.append(read(n).decode("utf-8", "surrogatepass"))
            elif op in (b"U", b"T"):                                       # SHORT_BINSTRING, BINSTRING
                n = read(1)[0] if op == b"U" else u("<i", read(4))[0]
                stack.append(read(n).decode("latin1"))
            elif op in (b"C", b"B", b"\x8e"):                              # SHORT_BINBYTES, BINBYTES, 8
                n = read(1)[0] if op == b"C" else u("<I", read(4))[0] if op == b"B" else u("<Q", read(8))[0]
                stack.append(read(n))
            elif op == b"\x96":                                            # BYTEARRAY8
                stack.append(self._new(bytearray(read(u("<Q", read(8))[0]))))
            elif op == b")":
                stack.append(())
            elif op == b"t":
                items = tuple(pop_mark())       # first: it changes which list ``stack`` is
                stack.append(items)
            elif op in (b"\x85", b"\x86", b"\x87"):                        # TUPLE1, 2, 3
                n = op[0] - 0x84
                if len(stack) < n:
                    raise IndexError("stack underflow")
                stack[-n:] = [tuple(stack[-n:])]
            elif op == b"]":
                stack.append(self._new([]))
            elif op == b"l":
                items = pop_mark()
                stack.append(self._new(items))
            elif op == b"}":
                stack.append(self._new({}))
            elif op == b"d":
                items = pop_mark()
                stack.append(self._new(dict(zip(items[::2], items[1::2]))))
            elif op == b"\x8f":                                            # EMPTY_SET
                stack.append(self._new(set()))
            elif op == b"\x91":                                            # FROZENSET
                items = pop_mark()
                stack.append(frozenset(items))
            elif op == b"a":                                               # APPEND
                item = stack.pop()
                self._target(stack[-1], (list,), "append to lists").append(item)
            elif op == b"e":                                               # APPENDS
                items = pop_mark()
                self._target(stack[-1], (list,), "extend lists").extend(items)
            elif op == b"s":                                               # SETITEM
                value, key = stack.pop(), stack.pop()
                self._target(stack[-1], (dict, OrderedDict), "SETITEM for dict, collections.OrderedDict")[key] = value
            elif op == b"u":                                               # SETITEMS
                items = pop_mark()
                target = self._target(stack[-1], (dict, OrderedDict), "SETITEMS for dict, collections.OrderedDict")
                if len(items) % 2:
                    raise ValueError("SETITEMS with an odd number of items")
                for i in range(0, len(items), 2):
                    target[items[i]] = items[i + 1]
            elif op == b"\x90":                                            # ADDITEMS
                items = pop_mark()
                self._target(stack[-1], (set,), "add to sets").update(items)
            elif op == b"c":                                               # GLOBAL
                module = self._line()
                stack.append(self._global(module, self._line()))
            elif op == b"\x93":                                            # STACK_GLOBAL
                name, module = stack.pop(), stack.pop()
                if type(module) is not str or type(name) is not str:
                    raise ValueError("STACK_GLOBAL's names are not strings")
                stack.append(self._global(module, name))
            elif op == b"R":                                               # REDUCE
                args = stack.pop()
                stack[-1] = self._call(stack[-1], args, "reduce")
            elif op == b"\x81":                                            # NEWOBJ
                args = stack.pop()
                cls = stack[-1]
                if self._classes.get(id(cls)) is cls:       # an allowlisted class: a bare instance, as pickle makes
                    if type(args) is not tuple:
                        raise ValueError("NEWOBJ's arguments are not a tuple")
                    stack[-1] = self._new(cls.__new__(cls, *args))
                else:
                    stack[-1] = self._call(cls, args, "NEWOBJ")
            elif op == b"b":                                               # BUILD
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == b"Q":                                               # BINPERSID
                stack.append(self._persistent_load(stack.pop()))
            elif op in (b"q", b"r", b"\x94"):                              # BINPUT, LONG_BINPUT, MEMOIZE
                key = read(1)[0] if op == b"q" else u("<I", read(4))[0] if op == b"r" else len(memo)
                if key >= _MEMO_LIMIT:
                    raise ValueError("memo index out of range")
                memo[key] = stack[-1]
            elif op in (b"h", b"j"):                                       # BINGET, LONG_BINGET
                key = read(1)[0] if op == b"h" else u("<I", read(4))[0]
                if key not in memo:
                    raise ValueError(f"memo key {key} was never stored")
                stack.append(memo[key])
            elif op == b"0":                                               # POP
                if stack:
                    stack.pop()
                else:
                    pop_mark()
            elif op == b"1":                                               # POP_MARK
                pop_mark()
            elif op == b"2":                                               # DUP
                stack.append(stack[-1])
            elif not op:
                raise EOFError("the pickle ends before its STOP instruction")
            else:
                raise refused(f"WeightsUnpickler error: Unsupported operand {op[0]}.")

    def _global(self, module, name):
        found = self._globals.get((module, name))
        if found is None and self._resolve is not None:
            found = self._resolve(module, name)
            if found is not None:       # buildable as an allowlisted class is, never callable by REDUCE
                self._globals[(module, name)] = found
                self._classes[id(found)] = found
        if found is None:
            raise self._unknown_global(module, name)
        return found

    def _build(self, inst, state):
        """PyTorch's reader also builds Tensors and Parameters; ours are built whole by their constructors."""
        builder = self._builders.get(type(inst))
        if builder is not None and self._fresh.get(id(inst)) is inst:
            builder(inst, state)
            return
        if self._classes.get(id(type(inst))) is type(inst) and self._fresh.get(id(inst)) is inst:
            _set_state(inst, state)
            return
        if type(inst) is not OrderedDict or self._fresh.get(id(inst)) is not inst:
            raise refused("WeightsUnpickler error: Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                          f"via `add_safe_globals`, but got {type(inst)}.")
        if type(state) is not dict or not all(type(k) is str and not hasattr(OrderedDict, k) for k in state):
            raise refused("WeightsUnpickler error: an OrderedDict can only be given new plain attributes (such as a "
                          "state_dict's _metadata).")
        inst.__dict__.update(state)


def _set_state(inst, state):
    """What ``pickle``'s BUILD does to an instance of an allowlisted class."""
    if hasattr(inst, "__setstate__"):
        inst.__setstate__(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for key, value in (slots or {}).items():
        setattr(inst, key, value)
