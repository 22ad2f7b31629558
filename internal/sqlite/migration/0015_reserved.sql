-- Reserved for the relay branch's migration (SPEC 20), numbered before
-- this branch's 0016: the merge replaces this file with that one.
SELECT 1;
