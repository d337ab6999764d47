// Push and notification handlers live here (branch web-server replaces this stub; see C7).
