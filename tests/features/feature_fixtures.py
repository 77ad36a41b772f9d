"""A small feature model with every UVL construct we use, and its configurations counted by hand."""

SMALL_UVL = """\
// a comment line
namespace Small

features
    Root {abstract}
        mandatory
            Strategy {abstract}
                alternative
                    Greedy
                    Sampling {do_sample true}
                    Beam
        optional
            Temperature {param 'temperature'}
                alternative
                    t_low {value 0.2}
                    t_high {value 1.3}
            /* a block comment */
            Extras
                or
                    e1
                    e2
            "Two Words" {doc 'a quoted name'}
constraints
    Temperature => Sampling
    Beam => !"Two Words"
"""
# Strategy (3 choices) x Temperature (only with Sampling: 1 + 2) x Extras (1 + 3) x "Two Words" (not with Beam):
# Greedy: 1*4*2 = 8; Sampling: 3*4*2 = 24; Beam: 1*4*1 = 4 -> 36
SMALL_COUNT = 36
