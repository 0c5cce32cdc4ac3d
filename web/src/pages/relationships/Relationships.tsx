// Delegated-access relationships: the list and the expiring list (both sides), a new draft and its changes (the
// partner), one relationship, and the approval page the organisation's admins are mailed (/relationships/:id/approval).
import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { Loading } from '../../components/Loading';
import { RelationshipList } from './List';

const Editor = lazy(() => import('./Editor'));
const Detail = lazy(() => import('./Detail'));
const Approval = lazy(() => import('./Approval'));
const Groups = lazy(() => import('./Groups'));
const AccessGroup = lazy(() => import('./Group'));

export default function Relationships() {
  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route index element={<RelationshipList />} />
        <Route path="expiring" element={<RelationshipList expiring />} />
        <Route path="new" element={<Editor />} />
        <Route path="groups" element={<Groups />} />
        <Route path="groups/:groupId" element={<AccessGroup />} />
        <Route path=":id" element={<Detail />} />
        <Route path=":id/edit" element={<Editor />} />
        <Route path=":id/approval" element={<Approval />} />
      </Routes>
    </Suspense>
  );
}
