"""What drives the worker besides its ready queues (``runtime.py``): the control queue
(cancellations) and the HTTP ops routes."""
