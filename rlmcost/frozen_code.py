"""The compiled makers of ``rlmcost.frozen`` (``__init__`` per shape, ``__eq__`` and ``__hash__``
per number of fields), written by ``rlmcost.frozen.code_module_text``: do not edit."""

# ruff: noqa
# mypy: ignore-errors


def _m0(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_d0__, __dataclass_d1__):
 def __init__(s,a0,a1):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
 return __init__


def _m1(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__):
 def __init__(s,a0,a1,a2):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
 return __init__


def _m2(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__):
 def __init__(s,a0,a1,a2):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  s.__post_init__()
 return __init__


def _m3(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__):
 def __init__(s,a0,a1,a2,a3):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
 return __init__


def _m4(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__):
 def __init__(s,a0,a1,a2,a3):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  s.__post_init__()
 return __init__


def _m5(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__):
 def __init__(s,a0,a1,a2,a3,a4):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
 return __init__


def _m6(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__):
 def __init__(s,a0,a1,a2,a3,a4,a5):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
 return __init__


def _m7(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__):
 def __init__(s,a0,a1,a2,a3,a4,a5):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  s.__post_init__()
 return __init__


def _m8(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
 return __init__


def _m9(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
 return __init__


def _m10(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  s.__post_init__()
 return __init__


def _m11(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
 return __init__


def _m12(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
 return __init__


def _m13(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  s.__post_init__()
 return __init__


def _m14(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
 return __init__


def _m15(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  s.__post_init__()
 return __init__


def _m16(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  s.__post_init__()
 return __init__


def _m17(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
 return __init__


def _m18(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
 return __init__


def _m19(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
 return __init__


def _m20(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
 return __init__


def _m21(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
 return __init__


def _m22(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
 return __init__


def _m23(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_n41__, __dataclass_n42__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__, __dataclass_d41__, __dataclass_d42__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40,a41,a42):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
  __dataclass_setattr__(s,__dataclass_n41__,a41)
  __dataclass_setattr__(s,__dataclass_n42__,a42)
 return __init__


def _m24(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,__dataclass_d18__() if a18 is __dataclass_F__ else a18)
 return __init__


def _m25(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,__dataclass_d15__() if a15 is __dataclass_F__ else a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
 return __init__


def _m26(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,__dataclass_d14__() if a14 is __dataclass_F__ else a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
 return __init__


def _m27(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,__dataclass_d13__() if a13 is __dataclass_F__ else a13)
  __dataclass_setattr__(s,__dataclass_n14__,__dataclass_d14__() if a14 is __dataclass_F__ else a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,__dataclass_d16__() if a16 is __dataclass_F__ else a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,__dataclass_d22__() if a22 is __dataclass_F__ else a22)
  __dataclass_setattr__(s,__dataclass_n23__,__dataclass_d23__() if a23 is __dataclass_F__ else a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
 return __init__


def _m28(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,__dataclass_d8__() if a8 is __dataclass_F__ else a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
 return __init__


def _m29(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_d0__):
 def __init__(s,a0):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
 return __init__


def _m30():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,)
  return NotImplemented
 return __eq__


def _m31():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,)
  return NotImplemented
 return __eq__


def _m32():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,)
  return NotImplemented
 return __eq__


def _m33():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,)
  return NotImplemented
 return __eq__


def _m34():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,)
  return NotImplemented
 return __eq__


def _m35():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,)
  return NotImplemented
 return __eq__


def _m36():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,)
  return NotImplemented
 return __eq__


def _m37():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,)
  return NotImplemented
 return __eq__


def _m38():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,)
  return NotImplemented
 return __eq__


def _m39():
 def __hash__(self):
  return hash((self.__dataclass_f0__,))
 return __hash__


def _m40():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,))
 return __hash__


def _m41():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,))
 return __hash__


def _m42():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,))
 return __hash__


def _m43():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,))
 return __hash__


def _m44():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,))
 return __hash__


def _m45():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,))
 return __hash__


def _m46():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,))
 return __hash__


def _m47():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,))
 return __hash__


def _m48():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,))
 return __hash__


def _m49():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,))
 return __hash__


def _m50(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
 return __init__


def _m51():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,)
  return NotImplemented
 return __eq__


def _m52(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_n41__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__, __dataclass_d41__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40,a41):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
  __dataclass_setattr__(s,__dataclass_n41__,a41)
 return __init__


def _m53():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,other.__dataclass_f40__,other.__dataclass_f41__,)
  return NotImplemented
 return __eq__


def _m54():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,other.__dataclass_f40__,other.__dataclass_f41__,other.__dataclass_f42__,)
  return NotImplemented
 return __eq__


def _m55(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
 return __init__


def _m56(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  s.__post_init__()
 return __init__


def _m57():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,))
 return __hash__


def _m58():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,)
  return NotImplemented
 return __eq__


def _m59():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,))
 return __hash__


def _m60(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_n41__, __dataclass_n42__, __dataclass_n43__, __dataclass_n44__, __dataclass_n45__, __dataclass_n46__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__, __dataclass_d41__, __dataclass_d42__, __dataclass_d43__, __dataclass_d44__, __dataclass_d45__, __dataclass_d46__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40,a41,a42,a43,a44,a45,a46):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
  __dataclass_setattr__(s,__dataclass_n41__,a41)
  __dataclass_setattr__(s,__dataclass_n42__,a42)
  __dataclass_setattr__(s,__dataclass_n43__,a43)
  __dataclass_setattr__(s,__dataclass_n44__,a44)
  __dataclass_setattr__(s,__dataclass_n45__,a45)
  __dataclass_setattr__(s,__dataclass_n46__,a46)
 return __init__


def _m61():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,self.__dataclass_f44__,self.__dataclass_f45__,self.__dataclass_f46__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,other.__dataclass_f40__,other.__dataclass_f41__,other.__dataclass_f42__,other.__dataclass_f43__,other.__dataclass_f44__,other.__dataclass_f45__,other.__dataclass_f46__,)
  return NotImplemented
 return __eq__


def _m62(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_n41__, __dataclass_n42__, __dataclass_n43__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__, __dataclass_d41__, __dataclass_d42__, __dataclass_d43__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40,a41,a42,a43):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
  __dataclass_setattr__(s,__dataclass_n41__,a41)
  __dataclass_setattr__(s,__dataclass_n42__,a42)
  __dataclass_setattr__(s,__dataclass_n43__,a43)
 return __init__


def _m63():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,other.__dataclass_f40__,other.__dataclass_f41__,other.__dataclass_f42__,other.__dataclass_f43__,)
  return NotImplemented
 return __eq__


def _m64(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
 return __init__


def _m65(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_n41__, __dataclass_n42__, __dataclass_n43__, __dataclass_n44__, __dataclass_n45__, __dataclass_n46__, __dataclass_n47__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__, __dataclass_d41__, __dataclass_d42__, __dataclass_d43__, __dataclass_d44__, __dataclass_d45__, __dataclass_d46__, __dataclass_d47__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40,a41,a42,a43,a44,a45,a46,a47):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
  __dataclass_setattr__(s,__dataclass_n41__,a41)
  __dataclass_setattr__(s,__dataclass_n42__,a42)
  __dataclass_setattr__(s,__dataclass_n43__,a43)
  __dataclass_setattr__(s,__dataclass_n44__,a44)
  __dataclass_setattr__(s,__dataclass_n45__,a45)
  __dataclass_setattr__(s,__dataclass_n46__,a46)
  __dataclass_setattr__(s,__dataclass_n47__,a47)
 return __init__


def _m66():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,))
 return __hash__


def _m67():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,)
  return NotImplemented
 return __eq__


def _m68():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,self.__dataclass_f44__,self.__dataclass_f45__,self.__dataclass_f46__,self.__dataclass_f47__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,other.__dataclass_f40__,other.__dataclass_f41__,other.__dataclass_f42__,other.__dataclass_f43__,other.__dataclass_f44__,other.__dataclass_f45__,other.__dataclass_f46__,other.__dataclass_f47__,)
  return NotImplemented
 return __eq__


def _m69(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
 return __init__


def _m70():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,))
 return __hash__


def _m71():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,)
  return NotImplemented
 return __eq__


def _m72(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,__dataclass_d8__() if a8 is __dataclass_F__ else a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
 return __init__


def _m73(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
 return __init__


def _m74(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
 return __init__


def _m75():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,))
 return __hash__


def _m76():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,)
  return NotImplemented
 return __eq__


def _m77():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,))
 return __hash__


def _m78(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__):
 def __init__(s,a0,a1,a2,a3,a4):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  s.__post_init__()
 return __init__


def _m79(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  s.__post_init__()
 return __init__


def _m80():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,self.__dataclass_f44__,self.__dataclass_f45__,self.__dataclass_f46__,))
 return __hash__


def _m81(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_n27__, __dataclass_n28__, __dataclass_n29__, __dataclass_n30__, __dataclass_n31__, __dataclass_n32__, __dataclass_n33__, __dataclass_n34__, __dataclass_n35__, __dataclass_n36__, __dataclass_n37__, __dataclass_n38__, __dataclass_n39__, __dataclass_n40__, __dataclass_n41__, __dataclass_n42__, __dataclass_n43__, __dataclass_n44__, __dataclass_n45__, __dataclass_n46__, __dataclass_n47__, __dataclass_n48__, __dataclass_n49__, __dataclass_n50__, __dataclass_n51__, __dataclass_n52__, __dataclass_n53__, __dataclass_n54__, __dataclass_n55__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__, __dataclass_d27__, __dataclass_d28__, __dataclass_d29__, __dataclass_d30__, __dataclass_d31__, __dataclass_d32__, __dataclass_d33__, __dataclass_d34__, __dataclass_d35__, __dataclass_d36__, __dataclass_d37__, __dataclass_d38__, __dataclass_d39__, __dataclass_d40__, __dataclass_d41__, __dataclass_d42__, __dataclass_d43__, __dataclass_d44__, __dataclass_d45__, __dataclass_d46__, __dataclass_d47__, __dataclass_d48__, __dataclass_d49__, __dataclass_d50__, __dataclass_d51__, __dataclass_d52__, __dataclass_d53__, __dataclass_d54__, __dataclass_d55__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33,a34,a35,a36,a37,a38,a39,a40,a41,a42,a43,a44,a45,a46,a47,a48,a49,a50,a51,a52,a53,a54,a55):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
  __dataclass_setattr__(s,__dataclass_n27__,a27)
  __dataclass_setattr__(s,__dataclass_n28__,a28)
  __dataclass_setattr__(s,__dataclass_n29__,a29)
  __dataclass_setattr__(s,__dataclass_n30__,a30)
  __dataclass_setattr__(s,__dataclass_n31__,a31)
  __dataclass_setattr__(s,__dataclass_n32__,a32)
  __dataclass_setattr__(s,__dataclass_n33__,a33)
  __dataclass_setattr__(s,__dataclass_n34__,a34)
  __dataclass_setattr__(s,__dataclass_n35__,a35)
  __dataclass_setattr__(s,__dataclass_n36__,a36)
  __dataclass_setattr__(s,__dataclass_n37__,a37)
  __dataclass_setattr__(s,__dataclass_n38__,a38)
  __dataclass_setattr__(s,__dataclass_n39__,a39)
  __dataclass_setattr__(s,__dataclass_n40__,a40)
  __dataclass_setattr__(s,__dataclass_n41__,a41)
  __dataclass_setattr__(s,__dataclass_n42__,a42)
  __dataclass_setattr__(s,__dataclass_n43__,a43)
  __dataclass_setattr__(s,__dataclass_n44__,a44)
  __dataclass_setattr__(s,__dataclass_n45__,a45)
  __dataclass_setattr__(s,__dataclass_n46__,a46)
  __dataclass_setattr__(s,__dataclass_n47__,a47)
  __dataclass_setattr__(s,__dataclass_n48__,a48)
  __dataclass_setattr__(s,__dataclass_n49__,a49)
  __dataclass_setattr__(s,__dataclass_n50__,a50)
  __dataclass_setattr__(s,__dataclass_n51__,a51)
  __dataclass_setattr__(s,__dataclass_n52__,a52)
  __dataclass_setattr__(s,__dataclass_n53__,a53)
  __dataclass_setattr__(s,__dataclass_n54__,a54)
  __dataclass_setattr__(s,__dataclass_n55__,a55)
 return __init__


def _m82():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,self.__dataclass_f44__,self.__dataclass_f45__,self.__dataclass_f46__,self.__dataclass_f47__,self.__dataclass_f48__,self.__dataclass_f49__,self.__dataclass_f50__,self.__dataclass_f51__,self.__dataclass_f52__,self.__dataclass_f53__,self.__dataclass_f54__,self.__dataclass_f55__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,other.__dataclass_f27__,other.__dataclass_f28__,other.__dataclass_f29__,other.__dataclass_f30__,other.__dataclass_f31__,other.__dataclass_f32__,other.__dataclass_f33__,other.__dataclass_f34__,other.__dataclass_f35__,other.__dataclass_f36__,other.__dataclass_f37__,other.__dataclass_f38__,other.__dataclass_f39__,other.__dataclass_f40__,other.__dataclass_f41__,other.__dataclass_f42__,other.__dataclass_f43__,other.__dataclass_f44__,other.__dataclass_f45__,other.__dataclass_f46__,other.__dataclass_f47__,other.__dataclass_f48__,other.__dataclass_f49__,other.__dataclass_f50__,other.__dataclass_f51__,other.__dataclass_f52__,other.__dataclass_f53__,other.__dataclass_f54__,other.__dataclass_f55__,)
  return NotImplemented
 return __eq__


def _m83():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,self.__dataclass_f27__,self.__dataclass_f28__,self.__dataclass_f29__,self.__dataclass_f30__,self.__dataclass_f31__,self.__dataclass_f32__,self.__dataclass_f33__,self.__dataclass_f34__,self.__dataclass_f35__,self.__dataclass_f36__,self.__dataclass_f37__,self.__dataclass_f38__,self.__dataclass_f39__,self.__dataclass_f40__,self.__dataclass_f41__,self.__dataclass_f42__,self.__dataclass_f43__,self.__dataclass_f44__,self.__dataclass_f45__,self.__dataclass_f46__,self.__dataclass_f47__,))
 return __hash__


def _m84(__dataclass_setattr__, __dataclass_F__, __dataclass_n0__, __dataclass_n1__, __dataclass_n2__, __dataclass_n3__, __dataclass_n4__, __dataclass_n5__, __dataclass_n6__, __dataclass_n7__, __dataclass_n8__, __dataclass_n9__, __dataclass_n10__, __dataclass_n11__, __dataclass_n12__, __dataclass_n13__, __dataclass_n14__, __dataclass_n15__, __dataclass_n16__, __dataclass_n17__, __dataclass_n18__, __dataclass_n19__, __dataclass_n20__, __dataclass_n21__, __dataclass_n22__, __dataclass_n23__, __dataclass_n24__, __dataclass_n25__, __dataclass_n26__, __dataclass_d0__, __dataclass_d1__, __dataclass_d2__, __dataclass_d3__, __dataclass_d4__, __dataclass_d5__, __dataclass_d6__, __dataclass_d7__, __dataclass_d8__, __dataclass_d9__, __dataclass_d10__, __dataclass_d11__, __dataclass_d12__, __dataclass_d13__, __dataclass_d14__, __dataclass_d15__, __dataclass_d16__, __dataclass_d17__, __dataclass_d18__, __dataclass_d19__, __dataclass_d20__, __dataclass_d21__, __dataclass_d22__, __dataclass_d23__, __dataclass_d24__, __dataclass_d25__, __dataclass_d26__):
 def __init__(s,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,a18,a19,a20,a21,a22,a23,a24,a25,a26):
  __dataclass_setattr__(s,__dataclass_n0__,a0)
  __dataclass_setattr__(s,__dataclass_n1__,a1)
  __dataclass_setattr__(s,__dataclass_n2__,a2)
  __dataclass_setattr__(s,__dataclass_n3__,a3)
  __dataclass_setattr__(s,__dataclass_n4__,a4)
  __dataclass_setattr__(s,__dataclass_n5__,a5)
  __dataclass_setattr__(s,__dataclass_n6__,a6)
  __dataclass_setattr__(s,__dataclass_n7__,a7)
  __dataclass_setattr__(s,__dataclass_n8__,a8)
  __dataclass_setattr__(s,__dataclass_n9__,a9)
  __dataclass_setattr__(s,__dataclass_n10__,a10)
  __dataclass_setattr__(s,__dataclass_n11__,a11)
  __dataclass_setattr__(s,__dataclass_n12__,a12)
  __dataclass_setattr__(s,__dataclass_n13__,a13)
  __dataclass_setattr__(s,__dataclass_n14__,a14)
  __dataclass_setattr__(s,__dataclass_n15__,a15)
  __dataclass_setattr__(s,__dataclass_n16__,a16)
  __dataclass_setattr__(s,__dataclass_n17__,a17)
  __dataclass_setattr__(s,__dataclass_n18__,a18)
  __dataclass_setattr__(s,__dataclass_n19__,a19)
  __dataclass_setattr__(s,__dataclass_n20__,a20)
  __dataclass_setattr__(s,__dataclass_n21__,a21)
  __dataclass_setattr__(s,__dataclass_n22__,a22)
  __dataclass_setattr__(s,__dataclass_n23__,a23)
  __dataclass_setattr__(s,__dataclass_n24__,a24)
  __dataclass_setattr__(s,__dataclass_n25__,a25)
  __dataclass_setattr__(s,__dataclass_n26__,a26)
 return __init__


def _m85():
 def __hash__(self):
  return hash((self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,))
 return __hash__


def _m86():
 def __eq__(self,other):
  if other.__class__ is self.__class__:
   return (self.__dataclass_f0__,self.__dataclass_f1__,self.__dataclass_f2__,self.__dataclass_f3__,self.__dataclass_f4__,self.__dataclass_f5__,self.__dataclass_f6__,self.__dataclass_f7__,self.__dataclass_f8__,self.__dataclass_f9__,self.__dataclass_f10__,self.__dataclass_f11__,self.__dataclass_f12__,self.__dataclass_f13__,self.__dataclass_f14__,self.__dataclass_f15__,self.__dataclass_f16__,self.__dataclass_f17__,self.__dataclass_f18__,self.__dataclass_f19__,self.__dataclass_f20__,self.__dataclass_f21__,self.__dataclass_f22__,self.__dataclass_f23__,self.__dataclass_f24__,self.__dataclass_f25__,self.__dataclass_f26__,)==(other.__dataclass_f0__,other.__dataclass_f1__,other.__dataclass_f2__,other.__dataclass_f3__,other.__dataclass_f4__,other.__dataclass_f5__,other.__dataclass_f6__,other.__dataclass_f7__,other.__dataclass_f8__,other.__dataclass_f9__,other.__dataclass_f10__,other.__dataclass_f11__,other.__dataclass_f12__,other.__dataclass_f13__,other.__dataclass_f14__,other.__dataclass_f15__,other.__dataclass_f16__,other.__dataclass_f17__,other.__dataclass_f18__,other.__dataclass_f19__,other.__dataclass_f20__,other.__dataclass_f21__,other.__dataclass_f22__,other.__dataclass_f23__,other.__dataclass_f24__,other.__dataclass_f25__,other.__dataclass_f26__,)
  return NotImplemented
 return __eq__


MAKERS = {
    ('__init__', ('arg', 'arg'), False): _m0,
    ('__init__', ('arg', 'arg', 'arg'), False): _m1,
    ('__init__', ('arg', 'arg', 'arg'), True): _m2,
    ('__init__', ('arg', 'arg', 'arg', 'arg'), False): _m3,
    ('__init__', ('arg', 'arg', 'arg', 'arg'), True): _m4,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg'), False): _m5,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m6,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m7,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m8,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m9,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m10,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m11,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m12,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m13,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m14,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m15,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m16,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m17,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m18,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m19,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m20,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m21,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m22,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m23,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory'), False): _m24,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory', 'arg', 'arg'), False): _m25,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory', 'arg', 'arg'), False): _m26,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory', 'factory', 'arg', 'factory', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory', 'factory', 'arg'), False): _m27,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory', 'arg', 'arg', 'arg', 'arg'), False): _m28,
    ('__init__', ('arg',), False): _m29,
    ('__eq__', 3): _m30,
    ('__eq__', 4): _m31,
    ('__eq__', 6): _m32,
    ('__eq__', 7): _m33,
    ('__eq__', 8): _m34,
    ('__eq__', 10): _m35,
    ('__eq__', 11): _m36,
    ('__eq__', 20): _m37,
    ('__eq__', 39): _m38,
    ('__hash__', 1): _m39,
    ('__hash__', 3): _m40,
    ('__hash__', 4): _m41,
    ('__hash__', 6): _m42,
    ('__hash__', 7): _m43,
    ('__hash__', 8): _m44,
    ('__hash__', 10): _m45,
    ('__hash__', 11): _m46,
    ('__hash__', 12): _m47,
    ('__hash__', 20): _m48,
    ('__hash__', 43): _m49,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m50,
    ('__eq__', 40): _m51,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m52,
    ('__eq__', 42): _m53,
    ('__eq__', 43): _m54,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m55,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m56,
    ('__hash__', 21): _m57,
    ('__eq__', 21): _m58,
    ('__hash__', 9): _m59,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m60,
    ('__eq__', 47): _m61,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m62,
    ('__eq__', 44): _m63,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m64,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m65,
    ('__hash__', 24): _m66,
    ('__eq__', 24): _m67,
    ('__eq__', 48): _m68,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m69,
    ('__hash__', 25): _m70,
    ('__eq__', 25): _m71,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'factory', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m72,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m73,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m74,
    ('__hash__', 5): _m75,
    ('__eq__', 5): _m76,
    ('__hash__', 44): _m77,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg'), True): _m78,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), True): _m79,
    ('__hash__', 47): _m80,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m81,
    ('__eq__', 56): _m82,
    ('__hash__', 48): _m83,
    ('__init__', ('arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg', 'arg'), False): _m84,
    ('__hash__', 27): _m85,
    ('__eq__', 27): _m86,
}
