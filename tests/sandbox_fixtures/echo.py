"""The simplest runner: read a frame on fd 3, write it back on fd 4, until the channel closes."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python -I leaves it out
import channel  # noqa: E402

for message in channel.requests():
    channel.reply(message)
